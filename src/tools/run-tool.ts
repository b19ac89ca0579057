/**
 * The one guard around every tool call, whatever the transport (REST, MCP over HTTP, MCP over
 * stdio): a timeout per class capped by REQUEST_TIMEOUT, an AbortSignal for the handler that fires
 * on timeout or when the caller goes away, structured logs, and errors reduced to coded ToolErrors
 * so nothing internal leaks. Input validation happens before this, in the transport adapter.
 */
import type { Logger } from 'pino';
import { isToolError, toolError, type ToolError } from '../errors.ts';
import { onAbort } from '../util/abort.ts';
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
  /**
   * REST: the HTTP response; the call is cancelled when it closes before it was written (the
   * client went away). Followed directly, so a call needs no second AbortController for it.
   */
  response?: ClosingResponse;
}

/** The part of an http.ServerResponse runTool follows. */
export interface ClosingResponse {
  readonly writableFinished: boolean;
  once(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

/** Milliseconds a call of this tool may take: its class timeout, capped by REQUEST_TIMEOUT. */
export function toolTimeoutMs(tool: AnyTool, config: Pick<Config, 'REQUEST_TIMEOUT'>): number {
  return Math.round(Math.min(TIMEOUT_SECONDS[tool.timeoutClass], config.REQUEST_TIMEOUT) * 1000);
}

/** The reason a finished call's signal is aborted with: one error for every call (building one, with its stack, per call was a measurable part of a small call). */
const CALL_ENDED = toolError('PROCESSING_ERROR', 'The call has ended');
const CLIENT_GONE_MESSAGE = 'The request was cancelled by the client';

/** Whether `log` writes at info: a test double without isLevelEnabled is taken to write everything. */
const writesInfo = (log: Logger): boolean => (typeof log.isLevelEnabled === 'function' ? log.isLevelEnabled('info') : true);

export async function runTool(tool: AnyTool, input: unknown, opts: RunToolOptions): Promise<unknown> {
  const timeoutMs = toolTimeoutMs(tool, opts.services.config);
  const principal = opts.principal ?? FULL_ACCESS;
  // The call's child logger is made when something logs through it (its bindings are serialized
  // at creation): a quiet successful call at LOG_LEVEL=warn never needs one.
  let child: Logger | undefined;
  const callLog = (): Logger =>
    (child ??= opts.log.child({ tool: tool.name, request_id: opts.requestId, transport: opts.transport, ...(principal === FULL_ACCESS ? {} : { key: principal.name }) }));
  const logInfo = writesInfo(opts.log);
  try {
    authorizeCall(tool, input, principal);
  } catch (err) {
    callLog().info({ event: 'tool.denied', code: (err as { code?: string }).code }, 'tool.denied');
    throw err;
  }
  // The handler's signal is made when the handler first reads it: a quick call that never looks
  // (detect_language, the health and cache tools) skips creating an AbortController and aborting it
  // at the end, which was a fifth of such a call's server time. `ended` is why the call stopped
  // early (timeout, caller gone, shutdown); a signal first read after that is born aborted.
  let controller: AbortController | undefined;
  let ended: ToolError | undefined;
  const signalOf = (): AbortSignal => {
    if (!controller) {
      controller = new AbortController();
      if (ended) controller.abort(ended);
    }
    return controller.signal;
  };
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10;

  let timer: NodeJS.Timeout | undefined;
  const unlink: (() => void)[] = [];
  if (logInfo) callLog().info({ event: 'tool.start', timeout_ms: timeoutMs, upload_bytes: opts.upload?.bytes.byteLength }, 'tool.start');
  try {
    // One promise settles the call: the handler's answer, the timeout or the caller's abort,
    // whichever comes first (no separate guard promise and race per call).
    const output = await new Promise<unknown>((resolve, reject) => {
      const fail = (err: ToolError) => {
        ended ??= err;
        controller?.abort(err);
        reject(err);
      };
      timer = setTimeout(() => fail(toolError('TIMEOUT', `${tool.name} did not finish within ${timeoutMs / 1000} s`)), timeoutMs);
      timer.unref?.();
      // A coded reason (the server shutting down) is the answer; anything else is the client leaving.
      const stop = (reason: unknown) => fail(isToolError(reason) ? reason : toolError('PROCESSING_ERROR', CLIENT_GONE_MESSAGE));
      for (const signal of [opts.signal, opts.shutdownSignal]) {
        if (!signal) continue;
        if (signal.aborted) {
          stop(signal.reason);
          return;
        }
        unlink.push(onAbort(signal, () => stop(signal.reason)));
      }
      const response = opts.response;
      if (response) {
        // The HTTP response closing before it was written: the client went away.
        const onClose = () => {
          if (!response.writableFinished) stop(undefined);
        };
        response.once('close', onClose);
        unlink.push(() => response.off('close', onClose));
      }
      // A handler that throws synchronously rejects like one that rejects; a handler that keeps
      // running after a timeout settles a promise nobody waits for any more, which is harmless.
      let work: Promise<unknown>;
      try {
        work = Promise.resolve(
          tool.handler(input, new CallToolContext(signalOf, callLog, opts, principal)),
        );
      } catch (err) {
        work = Promise.reject(err);
      }
      work.then(resolve, reject);
    });
    if (logInfo) callLog().info({ event: 'tool.success', elapsed_ms: elapsed() }, 'tool.success');
    return output;
  } catch (err) {
    throw logFailure(err, ended, callLog(), elapsed());
  } finally {
    clearTimeout(timer);
    for (const remove of unlink) remove();
    // Whatever the outcome, anything the handler left running is told to stop.
    if (controller && !controller.signal.aborted) controller.abort(CALL_ENDED);
    // Read after the end (work the handler left behind): already aborted.
    ended ??= CALL_ENDED;
  }
}

/**
 * The handler's context. A class, its `signal` and `log` getters on the prototype: an object
 * literal with getters made two closures and an accessor pair per call, and on Node 20 (V8 11.3)
 * such objects outlived the call through a scavenge or two (the young generation's survival
 * rose from 2.3% to 8-9% in a micro-benchmark of runTool alone, each scavenge 2-4x longer).
 */
class CallToolContext implements ToolContext {
  readonly requestId: string;
  readonly services: Services;
  readonly upload: UploadedFile | undefined;
  readonly tools: readonly AnyTool[] | undefined;
  readonly transport: string;
  readonly principal: Principal;
  readonly progress: ToolContext['progress'];
  readonly roots: ToolContext['roots'];

  constructor(
    private readonly signalOf: () => AbortSignal,
    private readonly logOf: () => Logger,
    opts: RunToolOptions,
    principal: Principal,
  ) {
    this.requestId = opts.requestId;
    this.services = opts.services;
    this.upload = opts.upload;
    this.tools = opts.tools;
    this.transport = opts.transport;
    this.principal = principal;
    this.progress = opts.progress;
    this.roots = opts.roots;
  }

  get signal(): AbortSignal {
    return this.signalOf();
  }

  get log(): Logger {
    return this.logOf();
  }
}

function logFailure(err: unknown, ended: ToolError | undefined, log: Logger, elapsedMs: number): ToolError {
  // A handler that rethrows the abort reason (or an AbortError) after our abort reports the abort.
  const coded = isToolError(err) ? err : (ended ?? null);
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
