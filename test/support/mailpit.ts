import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');

/**
 * Mailpit (github.com/axllent/mailpit, a real SMTP server with an HTTP API to read what arrived), as the
 * report tests use it: installed by scripts/provision-test-tools.mjs (`go install`), started here on free
 * ports, stopped by the test.
 */
export function mailpitBinary(): string | undefined {
  const candidates = [
    process.env.MAILPIT_BIN,
    join(root, '.cache/go-bin/mailpit'),
    join(process.env.HOME ?? '/root', 'go/bin/mailpit'),
    ...(process.env.PATH ?? '').split(delimiter).map((d) => join(d, 'mailpit')),
  ];
  return candidates.find((p): p is string => Boolean(p) && existsSync(p!));
}

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });
}

export interface MailpitMessage {
  ID: string;
  Subject: string;
  To: { Address: string }[];
  Attachments: number;
}

export interface Mailpit {
  smtpUrl: string;
  messages(): Promise<MailpitMessage[]>;
  message(
    id: string,
  ): Promise<{ Text: string; HTML: string; Attachments: { FileName: string; PartID: string }[] }>;
  part(id: string, partId: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startMailpit(): Promise<Mailpit> {
  const bin = mailpitBinary();
  if (!bin)
    throw new Error(
      'mailpit is not installed: node scripts/provision-test-tools.mjs (go install github.com/axllent/mailpit@v1.33.1)',
    );
  const [smtp, http] = [await freePort(), await freePort()];
  const child: ChildProcess = spawn(
    bin,
    ['--smtp', `127.0.0.1:${smtp}`, '--listen', `127.0.0.1:${http}`, '--quiet'],
    {
      stdio: 'ignore',
    },
  );
  const api = `http://127.0.0.1:${http}/api/v1`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const up = await fetch(`${api}/messages`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error('mailpit did not start within 60 s');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    smtpUrl: `smtp://127.0.0.1:${smtp}`,
    async messages() {
      const body = (await (await fetch(`${api}/messages`)).json()) as { messages: MailpitMessage[] };
      return body.messages;
    },
    async message(id) {
      return (await (await fetch(`${api}/message/${id}`)).json()) as never;
    },
    async part(id, partId) {
      return (await fetch(`${api}/message/${id}/part/${partId}`)).text();
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
    },
  };
}
