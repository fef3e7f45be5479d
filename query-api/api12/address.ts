/**
 * The REST route's pattern (docs/api.md "Addressing"). Also what request log lines name as the route, never
 * the path itself, which holds the api key.
 */
export const API12_REST_ROUTE = '/api/1.2/rest/:userId/:apiKey/:operation';
