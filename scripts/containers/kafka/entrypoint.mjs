// The stand-in's entry point: KAFKA_FOO_BAR=v becomes foo.bar=v in server.properties (as the apache/kafka
// image maps them: `___` is `-`, `__` is `_`), the storage is formatted with CLUSTER_ID once, then the
// broker runs in the foreground; SIGTERM is passed on (a clean shutdown).
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

const props = Object.entries(process.env)
  .filter(([k]) => k.startsWith('KAFKA_') && !['KAFKA_HOME', 'KAFKA_HEAP_OPTS', 'KAFKA_OPTS'].includes(k))
  .map(([k, v]) => {
    const key = k
      .slice(6)
      .toLowerCase()
      .replaceAll('___', '\u0001')
      .replaceAll('__', '\u0002')
      .replaceAll('_', '.')
      .replaceAll('\u0001', '-')
      .replaceAll('\u0002', '_');
    return `${key}=${v}`;
  });
const file = '/opt/kafka/server.properties';
writeFileSync(file, props.join('\n') + '\n');
const java = ['-Dlog4j.configuration=file:/opt/kafka/log4j.properties', '-cp', '/opt/kafka/libs/*'];
const format = spawnSync(
  'java',
  [
    ...java,
    'kafka.tools.StorageTool',
    'format',
    '-t',
    process.env.CLUSTER_ID ?? '',
    '-c',
    file,
    '--ignore-formatted',
  ],
  { stdio: 'inherit' },
);
if (format.status !== 0) process.exit(format.status ?? 1);
const heap = (process.env.KAFKA_HEAP_OPTS ?? '-Xmx512m -Xms512m').split(' ');
const broker = spawn('java', [...heap, ...java, 'kafka.Kafka', file], { stdio: 'inherit' });
broker.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => broker.kill('SIGTERM'));
