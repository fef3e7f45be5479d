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

  value(): T {
    this.parsed ??= { value: JSON.parse(this.bytes.toString('utf8')) as T };
    return this.parsed.value;
  }

  /** JSON.stringify(answer) gives the same text, so any encoder that goes through JSON sees the object. */
  toJSON(): T {
    return this.value();
  }
}
