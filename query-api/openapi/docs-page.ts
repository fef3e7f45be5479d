import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import express, { type Router } from 'express';

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
// credentialsFirst: the path's own parameters (user_id, api_key) are shared by GET and POST, so the
// document lists them once on the path; swagger-ui would show them after the operation's, last. Copied
// to the front of each operation's list here, they read first (the document itself is left as it is).
const INIT = `function credentialsFirst(text) {
  if (typeof text !== 'string') return text;
  let doc;
  try { doc = JSON.parse(text); } catch { return text; }
  for (const item of Object.values(doc.paths || {})) {
    const shared = item.parameters || [];
    if (!shared.length) continue;
    for (const method of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']) {
      const op = item[method];
      if (!op) continue;
      const own = (op.parameters || []).filter((p) => !shared.some((s) => s.name === p.name && s.in === p.in));
      op.parameters = [...shared, ...own];
    }
  }
  return JSON.stringify(doc);
}
window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  plugins: [() => ({ statePlugins: { spec: { wrapActions: { updateSpec: (ori) => (text) => ori(credentialsFirst(text)) } } } })],
  layout: 'BaseLayout',
});
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
