import { defineConfig } from 'vitest/config'

// Every property run spawns the built skipprd: seconds per case on a loaded 2-core machine.
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], testTimeout: 240_000, hookTimeout: 60_000 },
})
