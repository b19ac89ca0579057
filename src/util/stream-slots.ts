/**
 * How many long-lived streams (SSE job streams, MCP progress streams) are open, per client and in
 * all: each takes a slot before anything is written and gives it back when its connection ends. A
 * client over its share, or a server at its total, is refused (429 RATE_LIMITED) so one client
 * cannot hold every socket and timer of the process.
 */
import { toolError } from '../errors.ts';

export interface StreamSlotLimits {
  perClient: number;
  total: number;
}

export interface StreamSlotStats {
  open: number;
  clients: number;
  limits: StreamSlotLimits;
}

export class StreamSlots {
  private readonly byClient = new Map<string, number>();
  private count = 0;

  constructor(private readonly limits: StreamSlotLimits) {}

  /** Takes a slot for `client` or throws RATE_LIMITED; the returned function gives it back (once). */
  acquire(client: string): () => void {
    const mine = this.byClient.get(client) ?? 0;
    if (mine >= this.limits.perClient) {
      throw toolError('RATE_LIMITED', `Too many open streams for this client: ${mine} of ${this.limits.perClient} (STREAM_MAX_PER_CLIENT); close one and retry`);
    }
    if (this.count >= this.limits.total) {
      throw toolError('RATE_LIMITED', `Too many open streams on this server: ${this.count} of ${this.limits.total} (STREAM_MAX_TOTAL); retry later`);
    }
    this.byClient.set(client, mine + 1);
    this.count++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.count--;
      const left = (this.byClient.get(client) ?? 1) - 1;
      if (left <= 0) this.byClient.delete(client);
      else this.byClient.set(client, left);
    };
  }

  stats(): StreamSlotStats {
    return { open: this.count, clients: this.byClient.size, limits: { ...this.limits } };
  }
}
