import { describe, expect, it } from 'vitest';
import { operationLabel } from '../../query-api/ops/request-metrics.js';

const OPS = new Set(['automation.stats', 'transactional.templateRender']);

describe('operationLabel (the metrics label of a request)', () => {
  it.each([
    ['/api/1.2/rest/1/key/automation.stats.json', 'automation.stats'],
    ['/api/1.2/rest/1/key/transactional.templateRender.json', 'transactional.templateRender'],
    ['/api/1.2/rest/1/key/list.all.json', 'unknown'], // not served by this process
    ['/api/1.2/rest/1/key/automation.stats.xml', 'other'],
    ['/api/1.2/rest/1/secret-key', 'other'],
    ['/api/1.2/rest/1//secret-key/automation.stats.json', 'other'],
    ['/api/1.2/xmlrpc/1/secret-key', 'xmlrpc'],
    ['/ingest', 'ingest'],
    ['/health', 'healthz'],
    ['/healthz', 'healthz'],
    ['/readyz', 'readyz'],
    ['/metrics', 'metrics'],
    ['/openapi.json', 'openapi'],
    ['/docs', 'docs'],
    ['/docs/swagger-ui.css', 'docs'],
    ['/schemas/records.json', 'schemas'],
    ['/secret-key', 'other'],
  ])('%s → %s', (path, label) => {
    expect(operationLabel(path, OPS)).toBe(label);
  });
});
