import { defineConfig } from 'vitest/config'

// One file at a time: each starts its own server.
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000, fileParallelism: false },
})
