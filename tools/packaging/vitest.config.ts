import { defineConfig } from 'vitest/config'

// Packing the packages and an npm install from the registry: a minute or two, not seconds.
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], testTimeout: 300_000, hookTimeout: 300_000 },
})
