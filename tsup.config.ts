import { defineConfig } from 'tsup'

export default defineConfig({
  entry: { index: 'src/index.ts', 'testing/index': 'src/testing/index.ts', 'testing/msw': 'src/testing/msw.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node22',
  platform: 'node',
  splitting: false,
  shims: true,
  external: ['undici', 'zod', 'msw', '@mswjs/interceptors'],
})
