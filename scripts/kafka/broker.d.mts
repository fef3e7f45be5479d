export declare const DEFAULT_VERSION: string;
export declare function freePort(): Promise<number>;
export declare function ensureKafkaJars(opts?: { version?: string }): string;
export interface KafkaBroker {
  brokers: string;
  readonly pid: number | undefined;
  restart(): Promise<void>;
  stop(): Promise<void>;
}
export declare function startKafkaBroker(opts?: {
  version?: string;
  timeoutMs?: number;
}): Promise<KafkaBroker>;
