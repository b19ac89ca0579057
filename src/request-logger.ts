/**
 * Each request's logger (Fastify's request.log), made when something first logs through it. Fastify
 * makes a child logger per request for the request id, and a pino child serializes its bindings
 * when it is made: a few microseconds of every call, spent for nothing at LOG_LEVEL=warn, where a
 * successful call logs no line. This stands in for the child until a line at an enabled level is
 * written, a child of it is asked for, or its level is set; then it makes the real child once and
 * hands everything to it. Lines at disabled levels are dropped as pino drops them.
 */
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, LevelWithSilentOrString, LogFn } from 'pino';

type Pino = FastifyBaseLogger & {
  isLevelEnabled(level: string): boolean;
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger;
};

class LazyChildLogger {
  #real: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: Pino,
    private readonly childBindings: Bindings,
  ) {}

  private get real(): FastifyBaseLogger {
    return (this.#real ??= this.parent.child(this.childBindings));
  }

  get level(): LevelWithSilentOrString {
    return (this.#real ?? this.parent).level;
  }

  set level(level: LevelWithSilentOrString) {
    this.real.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return ((this.#real ?? this.parent) as Pino).isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return (this.real as Pino).child(bindings, options);
  }

  bindings(): Bindings {
    return (this.real as unknown as { bindings(): Bindings }).bindings();
  }

  private write(level: Level, args: Parameters<LogFn>): void {
    if (this.isLevelEnabled(level)) (this.real[level] as (...a: unknown[]) => void)(...args);
  }

  fatal(...args: Parameters<LogFn>): void {
    this.write('fatal', args);
  }
  error(...args: Parameters<LogFn>): void {
    this.write('error', args);
  }
  warn(...args: Parameters<LogFn>): void {
    this.write('warn', args);
  }
  info(...args: Parameters<LogFn>): void {
    this.write('info', args);
  }
  debug(...args: Parameters<LogFn>): void {
    this.write('debug', args);
  }
  trace(...args: Parameters<LogFn>): void {
    this.write('trace', args);
  }
  silent(): void {}
}

/**
 * Fastify's childLoggerFactory: the lazy child, or a real one at once where the route sets its own
 * log level or serializers (options), so those apply exactly as Fastify would apply them.
 */
export const lazyRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = function (logger, bindings, options) {
  if (options && Object.keys(options).length > 0) return logger.child(bindings, options);
  return new LazyChildLogger(logger as Pino, bindings) as unknown as FastifyBaseLogger;
};
