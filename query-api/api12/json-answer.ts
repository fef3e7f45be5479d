/**
 * An operation's answer already serialised: the UTF-8 bytes of its JSON text, exactly what `res.json`
 * would send for the object. The REST edge writes the bytes as they are; anything that needs the object
 * (the XML-RPC encoder, a test) gets it from `value()` or through `toJSON()`, parsed once on demand.
 *
 * The render worker makes these (render/worker.ts), so the event loop neither copies the rendered
 * content between threads as a string nor serialises it a second time (BENCHMARKS.md's history,
 * 2026-11-23).
 */
export class JsonAnswer<T = unknown> {
  private parsed: { value: T } | undefined;

  constructor(readonly bytes: Buffer) {}

  /** From bytes that arrived from another thread (a transferred buffer): wrapped, not copied. */
  static of<T>(bytes: Uint8Array): JsonAnswer<T> {
    return new JsonAnswer<T>(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }

  /** From an object: serialised here, as `res.json` would. */
  static from<T>(value: T): JsonAnswer<T> {
    const answer = new JsonAnswer<T>(Buffer.from(JSON.stringify(value), 'utf8'));
    answer.parsed = { value };
    return answer;
  }

  /**
   * From an array: each element serialised alone into one buffer, the same bytes as `from`. A year of
   * stats days is a ~230 KB text: made whole, it is allocated among the engine's large objects, which
   * only a full collection frees; element by element, each piece is short-lived (BENCHMARKS.md, Growth).
   */
  static fromArray<E>(items: E[]): JsonAnswer<E[]> {
    const pieces = items.map((item) => JSON.stringify(item));
    let length = pieces.length + 1;
    for (const p of pieces) length += Buffer.byteLength(p, 'utf8');
    const bytes = Buffer.allocUnsafe(Math.max(length, 2));
    let at = bytes.write('[', 0, 'latin1');
    for (const [i, p] of pieces.entries()) {
      if (i > 0) at += bytes.write(',', at, 'latin1');
      at += bytes.write(p, at, 'utf8');
    }
    bytes.write(']', at, 'latin1');
    const answer = new JsonAnswer<E[]>(bytes);
    answer.parsed = { value: items };
    return answer;
  }

  value(): T {
    this.parsed ??= { value: JSON.parse(this.bytes.toString('utf8')) as T };
    return this.parsed.value;
  }

  /** JSON.stringify(answer) gives the same text, so any encoder that goes through JSON sees the object. */
  toJSON(): T {
    return this.value();
  }
}
