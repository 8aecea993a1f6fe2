/**
 * The formats a config file may be written in: one shape, read as YAML, JSON or TOML by the file's
 * extension. Whatever the format, the result is a YAML document, so that everything after reading
 * (validation, `${NAME}` references, the programmatic editor) sees one kind of value.
 */
import path from 'node:path'
import { ConfigError } from '@skippr/connector-api'
import { parse as parseTomlText, TomlError } from 'smol-toml'
import { Document, parseDocument } from 'yaml'

export type ConfigFormat = 'yaml' | 'json' | 'toml'

/** `.json` and `.toml` by their extension; anything else (`.yml`, `.yaml`, none) is YAML. */
export function formatOf(file: string): ConfigFormat {
  const extension = path.extname(file).toLowerCase()
  return extension === '.json' ? 'json' : extension === '.toml' ? 'toml' : 'yaml'
}

export function parseConfigText(text: string, label: string, format: ConfigFormat): Document {
  if (format === 'json') return parseJson(text, label)
  if (format === 'toml') return parseToml(text, label)
  return parseYaml(text, label)
}

/**
 * A whole-value `${NAME}` is not valid YAML inside a flow mapping (`{ url: ${DB_URL} }`: `{` opens
 * a mapping there), yet it is the documented shape. When the text does not parse as it is, such
 * references are quoted and the text parsed again.
 */
const UNQUOTED_REFERENCE = /(^|[\s,[{])(\$\{[A-Za-z_][A-Za-z0-9_]*\})(?=[ \t]*(?:[,\]}#]|$))/gm

export function parseYaml(text: string, label: string): Document {
  let document = parseDocument(text)
  const quotedText = text.replace(UNQUOTED_REFERENCE, '$1"$2"')
  if (document.errors.length > 0 && quotedText !== text) {
    const quoted = parseDocument(quotedText)
    if (quoted.errors.length === 0) document = quoted
  }
  const error = document.errors[0]
  if (error) {
    const at = error.linePos?.[0]
    const where = at ? `${label}:${at.line}:${at.col}` : label
    throw new ConfigError(`${where}: not valid YAML: ${error.message.split(' at line')[0]}`, { cause: error })
  }
  return document
}

function parseJson(text: string, label: string): Document {
  try {
    return new Document(JSON.parse(text))
  } catch (error) {
    throw new ConfigError(`${label}: not valid JSON: ${(error as Error).message}`, { cause: error })
  }
}

function parseToml(text: string, label: string): Document {
  try {
    return new Document(parseTomlText(text))
  } catch (error) {
    const where = error instanceof TomlError ? `${label}:${error.line}:${error.column}` : label
    const reason = (error as Error).message.split('\n')[0]
    throw new ConfigError(`${where}: not valid TOML: ${reason}`, { cause: error })
  }
}
