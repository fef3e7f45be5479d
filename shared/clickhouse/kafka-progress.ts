import type { Db } from './client.js';

export interface OffsetRange {
  first: string;
  last: string;
}

/** The per-partition offset range being written (see migration 2). Offsets are strings, as in kafkajs. */
export class KafkaProgress {
  constructor(
    private readonly db: Db,
    private readonly groupId: string,
  ) {}

  async last(topic: string, partition: number): Promise<OffsetRange | undefined> {
    const [row] = await this.db.query<{ first: string; last: string }>(
      `SELECT toString(argMax(first_offset, updated)) AS first, toString(argMax(last_offset, updated)) AS last
       FROM kafka_progress WHERE group_id = {group:String} AND topic = {topic:String} AND partition = {partition:UInt32}
       HAVING count() > 0`,
      { group: this.groupId, topic, partition },
    );
    return row;
  }

  async begin(topic: string, partition: number, range: OffsetRange): Promise<void> {
    await this.db.insert(
      'kafka_progress',
      ['group_id', 'topic', 'partition', 'first_offset', 'last_offset'],
      [[this.groupId, topic, partition, range.first, range.last]],
    );
  }
}
