export interface Tool {
  name: string;
  tiers: ('unit' | 'all')[];
  why: string;
  present(): boolean;
  apt?: string;
  pip?: string;
}
export declare const TOOLS: Tool[];
export declare function installCommand(missing: Tool[]): string;
