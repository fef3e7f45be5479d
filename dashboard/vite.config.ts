import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/** The dashboard's build: `vite build --config dashboard/vite.config.ts` → dashboard/dist, served at /dashboard/. */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The page must work without any other host: every asset is a file of its own under /dashboard/.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
});
