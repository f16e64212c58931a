import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: {
    alias: {
      'chat-service-sdk/testing/msw': fileURLToPath(new URL('./src/testing/msw.ts', import.meta.url)),
      'chat-service-sdk/testing': fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)),
      'chat-service-sdk': fileURLToPath(new URL('./src/index.ts', import.meta.url)),
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      // The `chat-service` command is tested as users run it, child processes of the packed tarball
      // (test/cli/), which v8 coverage does not follow.
      exclude: ['src/cli/**'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: '.ci/out/coverage',
      thresholds: { lines: 90, branches: 85 },
    },
  },
})
