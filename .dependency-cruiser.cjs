// The layer rule (ARCHITECTURE.md, "Layers"), checked by `npm run lint:deps` and by .ci/run:
//
//   main.ts, admin/            the entry points
//   service/                   the composition root: config → store → pipeline / Kafka worker → HTTP app
//   query-api/   ingest/       the two sides; neither imports the other, except that query-api/ may
//                              take ingest/'s sink interface (ingest/sink.ts) for POST /ingest
//   shared/                    config, log, metrics, records, the ClickHouse stores, errors and limits
//
// Imports run only downwards, and never in a circle (type-only imports included: tsPreCompilationDeps).
// bench/, scripts/ and test/ stand outside the layers: they may import any of them, but no layer
// imports them, and they too may not close a cycle. dashboard/ is a browser app of its own: it imports
// no server code, only the type of the stats answer.

const server = '^(main\\.ts$|admin/|service/|query-api/|ingest/|shared/)';
/** The wire shape of the automation.stats answer: types only, no imports, shared with the dashboard. */
const statsAnswerType = '^query-api/stats/record\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'shared-imports-nothing-above',
      comment: 'shared/ is the ground floor: it imports no other folder of the project.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^(main\\.ts$|admin/|service/|query-api/|ingest/|bench/|scripts/|test/|dashboard/)' },
    },
    {
      name: 'ingest-not-query-api',
      comment: 'ingest/ is beside query-api/, not above it: what both use belongs in shared/.',
      severity: 'error',
      from: { path: '^ingest/' },
      to: { path: '^query-api/' },
    },
    {
      name: 'query-api-not-ingest-except-sink',
      comment:
        'query-api/ hands POST /ingest bodies to an IngestSink; of ingest/ it may import only that interface (ingest/sink.ts).',
      severity: 'error',
      from: { path: '^query-api/' },
      to: { path: '^ingest/', pathNot: '^ingest/sink\\.ts$' },
    },
    {
      name: 'no-service-below',
      comment: 'service/ composes query-api/, ingest/ and shared/; none of them imports it.',
      severity: 'error',
      from: { path: '^(query-api|ingest|shared)/' },
      to: { path: '^service/' },
    },
    {
      name: 'no-entry-point-below',
      comment: 'main.ts and admin/ are the top: nothing in the layers imports them.',
      severity: 'error',
      from: { path: '^(service|query-api|ingest|shared)/' },
      to: { path: '^(main\\.ts$|admin/)' },
    },
    {
      name: 'server-not-dev-code',
      comment: 'bench/, scripts/ and test/ stand outside the layers: the server never imports them.',
      severity: 'error',
      from: { path: server },
      to: { path: '^(bench|scripts|test)/' },
    },
    {
      name: 'dashboard-not-server',
      comment:
        'dashboard/ is a browser app (its own tsconfig): it calls the API and imports no server code, only the type of the stats answer (query-api/stats/record.ts).',
      severity: 'error',
      from: { path: '^dashboard/' },
      to: { path: `${server}|^(bench|scripts|test)/`, pathNot: statsAnswerType },
    },
    {
      name: 'dashboard-answer-type-only',
      comment:
        'The dashboard takes the stats answer as a type (`import type`), so nothing of the server is bundled.',
      severity: 'error',
      from: { path: '^dashboard/' },
      to: { path: statsAnswerType, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'server-not-dashboard',
      comment: 'The server serves dashboard/dist as files; it imports nothing of the browser app.',
      severity: 'error',
      from: { path: server },
      to: { path: '^dashboard/' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import the checker cannot resolve is an import it cannot check.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Type-only imports are dependencies too: a cycle through `import type` is still a cycle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    // Packages that name their entry only in `exports` (e.g. @platformatic/kafka) resolve as Node does.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    exclude: { path: '(^|/)(dist|\\.cache)/' },
  },
};
