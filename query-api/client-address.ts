import type { IncomingMessage } from 'node:http';
import express from 'express';
import type { TrustProxy } from '../shared/config.js';

/** Express's own `req.ip` getter (proxy-addr over the socket's address and X-Forwarded-For). */
const ipGetter = Object.getOwnPropertyDescriptor(express.request, 'ip')!.get!;
const trustNobody: TrustProxy = () => false;

/**
 * The client's address of a request that has not entered an Express app (answered in front of it), as
 * `req.ip` reads it there: the peer, or behind a proxy TRUST_PROXY names, the client its X-Forwarded-For
 * gives (docs/configuration.md, "Behind a reverse proxy").
 */
export function clientAddress(req: IncomingMessage, trust: TrustProxy | undefined): string | undefined {
  const app = { get: (name: string) => (name === 'trust proxy fn' ? (trust ?? trustNobody) : undefined) };
  return ipGetter.call(Object.assign(Object.create(req) as object, { app })) as string | undefined;
}
