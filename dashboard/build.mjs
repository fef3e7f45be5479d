// `npm install` (prepare) and `npm run build`: builds the dashboard into dashboard/dist with Vite.
// A production-only install (`npm install --omit=dev`) has no Vite: it says so and leaves the build to
// the build stage that has the dev dependencies (the service then answers /dashboard with a 503 that
// names the command).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
try {
  require.resolve('vite/package.json');
} catch {
  console.warn(
    'dashboard: vite is not installed (production install?) — not built; run `npm run build` with dev dependencies.',
  );
  process.exit(0);
}
const { build } = await import('vite');
await build({ configFile: fileURLToPath(new URL('./vite.config.ts', import.meta.url)) });
console.log('dashboard: built into dashboard/dist');
