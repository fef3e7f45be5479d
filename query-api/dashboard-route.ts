import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response, type NextFunction } from 'express';

/**
 * GET /dashboard: the built dashboard (dashboard/dist, made by `npm install` / `npm run build`).
 * Only static files: the page calls the API 1.2 operations like any other client.
 */
const here = dirname(fileURLToPath(import.meta.url));
/** From query-api/ when run with tsx, or from a compiled build one level deeper. */
const CANDIDATES = [resolve(here, '../dashboard/dist'), resolve(here, '../../dashboard/dist')];

/**
 * Nothing leaves for another host: scripts, styles, fetches and images come from this service only.
 * The template preview is a `sandbox=""` srcdoc iframe, which inherits this policy, so an email's remote
 * images or fonts are not fetched either; inline styles stay allowed because emails are styled inline.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "frame-ancestors 'none'",
  "form-action 'none'",
  "base-uri 'none'",
].join('; ');

/** The built page's folder, or null when `npm run build` has not made it. */
export const findDist = (): string | null =>
  CANDIDATES.find((d) => existsSync(join(d, 'index.html'))) ?? null;

export function dashboardRouter(distDir: string | null = findDist()) {
  const router = express.Router();
  router.use((_req: Request, res: Response, next: NextFunction) => {
    res.set({
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    });
    next();
  });
  if (!distDir) {
    router.use((_req: Request, res: Response) => {
      res
        .status(503)
        .type('text/plain')
        .send('The dashboard is not built: run `npm run build` (it runs `vite build` into dashboard/dist).');
    });
    return router;
  }
  router.use(
    express.static(distDir, {
      index: 'index.html',
      // Hashed asset names never change content; the page itself is always revalidated.
      setHeaders(res, path) {
        res.set('Cache-Control', path.endsWith('.html') ? 'no-cache' : 'public, max-age=31536000, immutable');
      },
    }),
  );
  return router;
}
