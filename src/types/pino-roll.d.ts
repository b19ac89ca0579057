declare module 'pino-roll' {
  import type { DestinationStream } from 'pino';
  interface PinoRollOptions {
    file: string | (() => string);
    size?: number | string;
    frequency?: number | 'daily' | 'hourly' | 'custom';
    extension?: string;
    mkdir?: boolean;
    dateFormat?: string;
    limit?: { count?: number; removeOtherLogFiles?: boolean };
    symlink?: boolean;
  }
  export default function build(options: PinoRollOptions): Promise<DestinationStream>;
}
