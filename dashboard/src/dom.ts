import { ApiError } from './api.js';

/** Small DOM helpers shared by every part of the page. */
export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

/** Shows `text` in `el`, or hides `el` when there is none. */
export function show(el: HTMLElement, text: string | undefined): void {
  el.textContent = text ?? '';
  el.hidden = !text;
}

/** What the user reads for a failure: the API's own message and code, or what went wrong on the way. */
export const messageOf = (err: unknown): string =>
  err instanceof ApiError
    ? err.code > 0
      ? `${err.message} (code ${err.code})`
      : err.message
    : `Unexpected error: ${String(err)}`;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text?: string,
  attrs: Record<string, string> = {},
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}
