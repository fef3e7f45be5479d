import type { Db } from './client.js';

/**
 * A partition's offset range being written, and what it held: fingerprints of its first and last
 * messages (key, value, timestamp). Offsets alone do not name data: they start again from 0 when a
 * topic is re-created or a broker replaced, so a range is trusted only when the messages now at its
 * offsets are the ones recorded (ARCHITECTURE.md, "Counted once"). Offsets are strings, as in kafkajs.
 */
export interface RecordedRange {
  first: string;
  last: string;
  firstHash: string;
  lastHash: string;
}

/** The per-partition range being written (migrations 2 and 3). */
export class KafkaProgress {
  constructor(
    private readonly db: Db,
    private readonly groupId: string,
  ) {}

  async last(topic: string, partition: number): Promise<RecordedRange | undefined> {
    const [row] = await this.db.query<RecordedRange>(
      `SELECT toString(argMax(first_offset, updated)) AS first, toString(argMax(last_offset, updated)) AS last,
              argMax(first_hash, updated) AS firstHash, argMax(last_hash, updated) AS lastHash
       FROM kafka_progress WHERE group_id = {group:String} AND topic = {topic:String} AND partition = {partition:UInt32}
       HAVING count() > 0`,
      { group: this.groupId, topic, partition },
    );
    return row;
  }

  async begin(topic: string, partition: number, range: RecordedRange): Promise<void> {
    await this.db.insert(
      'kafka_progress',
      ['group_id', 'topic', 'partition', 'first_offset', 'last_offset', 'first_hash', 'last_hash'],
      [[this.groupId, topic, partition, range.first, range.last, range.firstHash, range.lastHash]],
    );
  }
}
