import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import express, { type Router } from 'express';
import { BODY_TAG } from './document.js';

/** swagger-ui's own files, served from node_modules: no CDN, nothing fetched from elsewhere. */
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png'];

/**
 * The browser may load and connect to this origin only: a broken promise of "no external requests"
 * (a font, a validator badge) fails loudly in the console instead of leaking the reader's address.
 */
const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; " +
  "connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

// Paths are relative to /docs, so the page also works behind a reverse proxy that adds a prefix.
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>mailstats API</title>
  <link rel="stylesheet" href="docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="docs/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="docs/swagger-ui-bundle.js"></script>
  <script src="docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: swagger-ui would otherwise send the document to validator.swagger.io for a badge.
// The document lists each API operation twice, by GET (the main group) and by POST with a body (a group
// of its own, document.ts); the POST group starts collapsed, so the page lists each operation once. A
// deep link to a POST operation opens its group (swagger-ui's deep linking runs once the spec is loaded).
const INIT = `window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
window.ui.layoutActions.show(['operations-tag', ${JSON.stringify(BODY_TAG)}], false);
`;

/** GET /docs: the OpenAPI document rendered by swagger-ui (its files from node_modules). */
export function docsRouter(): Router {
  // Strict: "/docs/" would resolve the page's relative asset paths one level too deep.
  const router = express.Router({ strict: true });
  router.get('/docs/', (_req, res) => res.redirect(301, '../docs'));
  router.get('/docs', (_req, res) => {
    res.set('content-security-policy', CSP).type('html').send(PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(INIT);
  });
  for (const file of ASSETS)
    router.get(`/docs/${file}`, (_req, res) => {
      res.set('cache-control', 'public, max-age=86400').sendFile(join(SWAGGER_UI_DIR, file));
    });
  return router;
}
