import { defineConfig } from 'vitest/config'

// The chaos runs spawn the built skipprd a dozen times each: minutes, not seconds, on a loaded machine.
export default defineConfig({ test: { include: ['test/**/*.test.ts'], testTimeout: 240_000 } })
