/** A bearer token shorter than this is guessable (docs/configuration.md, INGEST_TOKEN and ADMIN_TOKEN). */
export const MIN_TOKEN_LENGTH = 32;

/** The placeholders published in .env.example and the docs, and the usual stand-ins. */
const PLACEHOLDER = /change-?me|placeholder|your[-_ ]?(ingest[-_ ]?|admin[-_ ]?)?token|^x+$|^0+$/i;

/** Why `token` may not be a bearer token, or undefined when it may. */
export function tokenProblem(token: string): string | undefined {
  if (token.length === 0) return 'is empty';
  if (PLACEHOLDER.test(token))
    return 'is a published placeholder: generate one (npm run admin -- token rotate)';
  if (token.length < MIN_TOKEN_LENGTH)
    return `must be at least ${MIN_TOKEN_LENGTH} characters (npm run admin -- token rotate makes one)`;
  return undefined;
}
