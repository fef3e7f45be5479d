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
// no server code, only the type of the stats answer. Of the server, only the Kafka seam's adapter
// (ingest/kafka/kafkajs.ts) imports a Kafka client library (ARCHITECTURE.md, "The Kafka client").

const server = '^(main\\.ts$|admin/|service/|query-api/|ingest/|shared/)';
/** The wire shape of the automation.stats answer: types only, no imports, shared with the dashboard. */
const statsAnswerType = '^query-api/stats/record\\.ts$';

/** The one module of the server that imports a Kafka client library: the seam's kafkajs adapter. */
const kafkaSeam = '^ingest/kafka/kafkajs\\.ts$';
/** Kafka client libraries: today's (kafkajs) and the candidates (ARCHITECTURE.md, "The Kafka client"). */
const kafkaClients =
  '(^|/)node_modules/(kafkajs|@platformatic/kafka|@confluentinc/kafka-javascript|node-rdkafka)/';

/** A forbidden import: its name (printed with each violation), why, where from and where to. */
const rule = (name, comment, from, to) => ({ name, comment, severity: 'error', from, to });

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    rule(
      'shared-imports-nothing-above',
      'shared/ is the ground floor: it imports no other folder of the project.',
      { path: '^shared/' },
      { path: '^(main\\.ts$|admin/|service/|query-api/|ingest/|bench/|scripts/|test/|dashboard/)' },
    ),
    rule(
      'ingest-not-query-api',
      'ingest/ is beside query-api/, not above it: what both use belongs in shared/.',
      { path: '^ingest/' },
      { path: '^query-api/' },
    ),
    rule(
      'query-api-not-ingest-except-sink',
      'query-api/ hands POST /ingest bodies to an IngestSink; of ingest/ it may import only that interface (ingest/sink.ts).',
      { path: '^query-api/' },
      { path: '^ingest/', pathNot: '^ingest/sink\\.ts$' },
    ),
    rule(
      'no-service-below',
      'service/ composes query-api/, ingest/ and shared/; none of them imports it.',
      { path: '^(query-api|ingest|shared)/' },
      { path: '^service/' },
    ),
    rule(
      'no-entry-point-below',
      'main.ts and admin/ are the top: nothing in the layers imports them.',
      { path: '^(service|query-api|ingest|shared)/' },
      { path: '^(main\\.ts$|admin/)' },
    ),
    rule(
      'server-not-dev-code',
      'bench/, scripts/ and test/ stand outside the layers: the server never imports them.',
      { path: server },
      { path: '^(bench|scripts|test)/' },
    ),
    rule(
      'dashboard-not-server',
      'dashboard/ is a browser app (its own tsconfig): it calls the API and imports no server code, only the type of the stats answer (query-api/stats/record.ts).',
      { path: '^dashboard/' },
      { path: `${server}|^(bench|scripts|test)/`, pathNot: statsAnswerType },
    ),
    rule(
      'dashboard-answer-type-only',
      'The dashboard takes the stats answer as a type (`import type`), so nothing of the server is bundled.',
      { path: '^dashboard/' },
      { path: statsAnswerType, dependencyTypesNot: ['type-only'] },
    ),
    rule(
      'server-not-dashboard',
      'The server serves dashboard/dist as files; it imports nothing of the browser app.',
      { path: server },
      { path: '^dashboard/' },
    ),
    rule(
      'kafka-client-only-through-the-seam',
      "A Kafka client library is imported by the seam's adapter only (ingest/kafka/kafkajs.ts): the rest of the server uses the seam's interface (ingest/kafka/client.ts), so that another client replaces kafkajs in one module (ARCHITECTURE.md, \"The Kafka client\"). bench/ and test/ may use kafkajs as the outside world's client (producing test data, checking committed offsets with a client independent of the code under test), and scripts/ as the harness that starts a broker with plain Node.",
      { path: server, pathNot: kafkaSeam },
      { path: kafkaClients },
    ),
    rule('no-circular', 'No import cycles, type-only imports included.', {}, { circular: true }),
    rule(
      'not-to-unresolvable',
      'An import the checker cannot resolve is an import it cannot check.',
      {},
      { couldNotResolve: true },
    ),
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
