/**
 * `p`, or the error `onTimeout` makes when `p` has not settled within `ms`. The timer is cleared
 * when `p` settles and never keeps the process alive; `p` itself is not cancelled (callers that
 * can abort the work pass it a signal of their own).
 */
export function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(onTimeout()), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}
