/** How many bytes of an over-long line or element are kept, to show it in the error. */
const HEAD_BYTES = 200;

/**
 * The bytes of one input line or JSON array element, gathered across the chunks of a stream, up to `max`
 * bytes: past that its bytes are dropped (so that one huge line cannot exhaust memory) and only its first
 * 200 bytes are kept, to name it in the error. Shared by the NDJSON/CSV line splitter and the JSON array
 * scanner of `import`.
 */
export class BoundedBytes {
  private parts: Buffer[] = [];
  private size = 0;
  /** Whether the current line or element went past `max`. */
  tooLong = false;
  /** Its first bytes, as text, once `tooLong`. */
  head = '';

  constructor(private readonly max: number) {}

  /** Add the next piece of the current line or element (nothing once it is too long). */
  add(seg: Buffer): void {
    if (this.tooLong) return;
    if (this.size + seg.length > this.max) {
      this.tooLong = true;
      this.head = Buffer.concat([...this.parts, seg])
        .subarray(0, HEAD_BYTES)
        .toString('utf8');
      this.parts = [];
      this.size = 0;
    } else if (seg.length > 0) {
      this.parts.push(seg);
      this.size += seg.length;
    }
  }

  get empty(): boolean {
    return this.size === 0;
  }

  /** The gathered bytes (none once too long). */
  bytes(): Buffer {
    return this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
  }

  /** Start the next line or element. */
  reset(): void {
    this.parts = [];
    this.size = 0;
    this.tooLong = false;
  }
}
