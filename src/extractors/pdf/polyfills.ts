/**
 * Node 20 lacks ArrayBuffer.prototype.transfer / transferToFixedLength (ES2024). pdf.js uses
 * transferToFixedLength while compiling fonts for rendering; without it glyphs fail and rendered
 * pages come out blank, so scanned-page OCR would read nothing. Installing is idempotent and
 * changes nothing on runtimes that already have the methods.
 */
type TransferFn = (this: ArrayBuffer, newLength?: number) => ArrayBuffer;

function copyTransfer(this: ArrayBuffer, newLength?: number): ArrayBuffer {
  const length = newLength === undefined ? this.byteLength : Math.max(0, Math.trunc(newLength));
  const out = new ArrayBuffer(length);
  new Uint8Array(out).set(new Uint8Array(this, 0, Math.min(length, this.byteLength)));
  return out;
}

export function installArrayBufferTransferPolyfill(): void {
  const proto = ArrayBuffer.prototype as unknown as Record<string, TransferFn | undefined>;
  for (const name of ['transferToFixedLength', 'transfer']) {
    if (typeof proto[name] !== 'function') {
      Object.defineProperty(ArrayBuffer.prototype, name, { value: copyTransfer, writable: true, configurable: true });
    }
  }
}
