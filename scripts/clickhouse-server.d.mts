export interface ClickHouseServer {
  url: string;
  httpPort: number;
  tcpPort: number;
  dir: string;
  backupsDir: string;
  version: string;
  readonly pid: number | undefined;
  kill(): Promise<void>;
  restart(): Promise<string>;
  stop(opts?: { keepData?: boolean }): Promise<void>;
}
export function engineLibrary(): string;
export function freePort(): Promise<number>;
export function startClickHouseServer(opts?: {
  dir?: string;
  backupsDir?: string;
  timeoutMs?: number;
  log?: (message: string) => void;
}): Promise<ClickHouseServer>;
