import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link in the project's own documentation resolves: the file it names exists, and a
 * `#anchor` names a heading of that page (GitHub's slugs). docs/development.md "Tests" says so.
 */

const root = resolve(import.meta.dirname, '../..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

const pages = [
  ...['README.md', 'ARCHITECTURE.md', 'BENCHMARKS.md'].map((f) => join(root, f)),
  ...(existsSync(join(root, 'docs')) ? markdownFiles(join(root, 'docs')) : []),
];

/** The page's text without fenced code blocks (links and headings there are code). */
function withoutFences(text: string): string {
  return text.replace(/^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '');
}

/** …and without inline code spans (a link written in code is not a link). */
function prose(text: string): string {
  return withoutFences(text).replace(/(`+)[\s\S]*?\1/g, (span) => ' '.repeat(span.length));
}

/** Link targets: inline `[text](target "title")`, images, and reference definitions `[x]: target`. */
export function linkTargets(text: string): string[] {
  const body = prose(text);
  const inline = [...body.matchAll(/!?\[[^\]]*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+["'(][^)]*)?\)/g)].map(
    (m) => m[1]!,
  );
  const defs = [...body.matchAll(/^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/gm)].map((m) => m[1]!);
  return [...inline, ...defs].map((t) => t.replace(/^<|>$/g, ''));
}

/** GitHub's heading anchors (github-slugger): lower case, punctuation dropped, spaces → `-`, repeats numbered. */
export function headingSlugs(text: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of withoutFences(text).matchAll(/^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/gm)) {
    const visible = m[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text only
      .replace(/[`*]/g, '');
    const base = visible
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    slugs.add(n === 0 ? base : `${base}-${n}`);
  }
  return slugs;
}

/** The problems of one page's links, each naming the page and the link. */
export function brokenLinks(page: string): string[] {
  const problems: string[] = [];
  const name = relative(root, page);
  for (const target of linkTargets(readFileSync(page, 'utf8'))) {
    if (/^(https?:|mailto:)/i.test(target)) continue;
    const [pathPart = '', anchor] = target.split('#', 2);
    if (pathPart === '') {
      if (anchor && !headingSlugs(readFileSync(page, 'utf8')).has(decodeURIComponent(anchor)))
        problems.push(`${name}: ${target} (no such heading here)`);
      continue;
    }
    const file = resolve(dirname(page), decodeURIComponent(pathPart));
    if (!existsSync(file)) {
      problems.push(`${name}: ${target} (no file ${relative(root, file)})`);
      continue;
    }
    if (
      anchor &&
      file.endsWith('.md') &&
      !headingSlugs(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor))
    )
      problems.push(`${name}: ${target} (no such heading in ${relative(root, file)})`);
  }
  return problems;
}

describe('documentation links', () => {
  it('reads README.md, ARCHITECTURE.md, BENCHMARKS.md and every page under docs/', () => {
    const names = pages.map((p) => relative(root, p));
    expect(names).toEqual(
      expect.arrayContaining(['README.md', 'ARCHITECTURE.md', 'BENCHMARKS.md', 'docs/api.md']),
    );
  });

  it('slugs headings as GitHub does', () => {
    const slugs = headingSlugs(
      "# API\n## `automation.stats` parameters\n## Clients' encodings\n## A\n## A\n",
    );
    expect([...slugs]).toEqual(['api', 'automationstats-parameters', 'clients-encodings', 'a', 'a-1']);
  });

  it('finds links but not code', () => {
    const text = '[a](x.md) ![i](p.png "t") `[no](y.md)`\n```\n[no](z.md)\n```\n[r]: <r.md>\n';
    expect(linkTargets(text)).toEqual(['x.md', 'p.png', 'r.md']);
  });

  it.each(pages.map((p) => [relative(root, p), p]))('%s: every relative link resolves', (_name, page) => {
    expect(brokenLinks(page)).toEqual([]);
  });
});
