/**
 * Loading a package the user installs for what they use (a connector, a state store): first from
 * the config file's directory, then from skipprd's own dependencies.
 */
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { ConfigError } from '@skippr/connector-api'

/**
 * The package's module, or undefined when it is not installed. Only "module not found" for the
 * package itself means that; any other failure (a broken install, a missing native binding) is
 * reported as it is.
 */
export async function importPackage(name: string, configDir: string): Promise<unknown> {
  let specifier = name
  try {
    specifier = pathToFileURL(createRequire(path.join(configDir, 'skippr.yml')).resolve(name)).href
  } catch {
    // Not installed beside the config: fall back to skipprd's own dependencies.
  }
  try {
    return await import(specifier)
  } catch (error) {
    if (isMissing(error, name)) return undefined
    throw new ConfigError(`cannot load ${name}: ${(error as Error).message}`, { cause: error })
  }
}

function isMissing(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown })?.code
  return code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes(`'${name}'`)
}
