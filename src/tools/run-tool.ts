/**
 * The one guard around every tool call, whatever the transport (REST, MCP over HTTP, MCP over
 * stdio): a timeout per class capped by REQUEST_TIMEOUT, an AbortSignal for the handler that fires
 * on timeout or when the caller goes away, structured logs, and errors reduced to coded ToolErrors
 * so nothing internal leaks. Input validation happens before this, in the transport adapter.
 */
import type { Logger } from 'pino';
import { isToolError, toolError, type ToolError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { Config } from '../config.ts';
import type { UploadedFile } from '../call-context.ts';
import { TIMEOUT_SECONDS, type AnyTool, type ToolContext } from './define-tool.ts';
import { FULL_ACCESS, type Principal } from '../auth/principal.ts';
import { authorizeCall } from '../auth/tool-access.ts';

export interface RunToolOptions {
  services: Services;
  log: Logger;
  requestId: string;
  /** The registry this call is served from. */
  tools?: readonly AnyTool[];
  /** Aborts the call early (client disconnect, MCP cancellation). */
  signal?: AbortSignal;
  /**
   * The server's shutdown signal (long-lived: followed with a listener removed when the call
   * ends, never through AbortSignal.any, which leaks on Node 20). Its reason is the call's error.
   */
  shutdownSignal?: AbortSignal;
  upload?: UploadedFile;
  /** MCP: progress notifications for the call (ToolContext.progress). */
  progress?: ToolContext['progress'];
  /** MCP over stdio: the client's roots as paths (ToolContext.roots). */
  roots?: ToolContext['roots'];
  /** For the logs: rest | mcp | stdio. */
  transport: string;
  /** The key making the call; absent: full access (auth off, or a call the server makes itself). */
  principal?: Principal;
}

/** Milliseconds a call of this tool may take: its class timeout, capped by REQUEST_TIMEOUT. */
export function toolTimeoutMs(tool: AnyTool, config: Pick<Config, 'REQUEST_TIMEOUT'>): number {
  return Math.round(Math.min(TIMEOUT_SECONDS[tool.timeoutClass], config.REQUEST_TIMEOUT) * 1000);
}

export async function runTool(tool: AnyTool, input: unknown, opts: RunToolOptions): Promise<unknown> {
  const timeoutMs = toolTimeoutMs(tool, opts.services.config);
  const principal = opts.principal ?? FULL_ACCESS;
  const log = opts.log.child({ tool: tool.name, request_id: opts.requestId, transport: opts.transport, ...(principal === FULL_ACCESS ? {} : { key: principal.name }) });
  try {
    authorizeCall(tool, input, principal);
  } catch (err) {
    log.info({ event: 'tool.denied', code: (err as { code?: string }).code }, 'tool.denied');
    throw err;
  }
  const controller = new AbortController();
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10;

  let timer: NodeJS.Timeout | undefined;
  const unlink: (() => void)[] = [];
  // Settles only with a rejection: whichever of timeout / caller abort comes first.
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = toolError('TIMEOUT', `${tool.name} did not finish within ${timeoutMs / 1000} s`);
      controller.abort(err);
      reject(err);
    }, timeoutMs);
    timer.unref?.();
    const stop = (signal: AbortSignal) => {
      // A coded reason (the server shutting down) is the answer; anything else is the client leaving.
      const reason: unknown = signal.reason;
      const err = isToolError(reason) ? reason : toolError('PROCESSING_ERROR', 'The request was cancelled by the client');
      controller.abort(err);
      reject(err);
    };
    for (const signal of [opts.signal, opts.shutdownSignal]) {
      if (!signal) continue;
      if (signal.aborted) {
        stop(signal);
        break;
      }
      const listener = () => stop(signal);
      signal.addEventListener('abort', listener, { once: true });
      unlink.push(() => signal.removeEventListener('abort', listener));
    }
  });

  log.info({ event: 'tool.start', timeout_ms: timeoutMs, upload_bytes: opts.upload?.bytes.byteLength }, 'tool.start');
  const work = Promise.resolve().then(() =>
    tool.handler(input, {
      signal: controller.signal,
      log,
      requestId: opts.requestId,
      services: opts.services,
      upload: opts.upload,
      tools: opts.tools,
      transport: opts.transport,
      principal,
      ...(opts.progress ? { progress: opts.progress } : {}),
      ...(opts.roots ? { roots: opts.roots } : {}),
    }),
  );
  // A handler that keeps running after a timeout must not surface as an unhandled rejection.
  work.catch(() => {});
  try {
    const output = await Promise.race([work, guard]);
    log.info({ event: 'tool.success', elapsed_ms: elapsed() }, 'tool.success');
    return output;
  } catch (err) {
    throw logFailure(err, controller.signal, log, elapsed());
  } finally {
    clearTimeout(timer);
    for (const remove of unlink) remove();
    // Whatever the outcome, anything the handler left running is told to stop.
    if (!controller.signal.aborted) controller.abort(toolError('PROCESSING_ERROR', 'The call has ended'));
  }
}

function logFailure(err: unknown, signal: AbortSignal, log: Logger, elapsedMs: number): ToolError {
  // A handler that rethrows the abort reason (or an AbortError) after our abort reports the abort.
  const coded = isToolError(err) ? err : signal.aborted && isToolError(signal.reason) ? signal.reason : null;
  if (coded?.code === 'TIMEOUT') {
    log.warn({ event: 'tool.timeout', code: coded.code, elapsed_ms: elapsedMs }, 'tool.timeout');
    return coded;
  }
  if (coded) {
    const level = coded.status >= 500 ? 'error' : 'warn';
    log[level]({ event: 'tool.error', code: coded.code, status: coded.status, elapsed_ms: elapsedMs, err: coded.status >= 500 ? coded : undefined, error: coded.message }, 'tool.error');
    return coded;
  }
  log.error({ event: 'tool.error', code: 'INTERNAL_ERROR', status: 500, elapsed_ms: elapsedMs, err }, 'tool.error');
  return toolError('INTERNAL_ERROR', 'Internal server error', err);
}
