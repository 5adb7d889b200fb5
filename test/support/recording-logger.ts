import { ConsoleLogger } from '@nestjs/common';

/** A Nest logger that keeps what is logged at warn and error (with the error's stack, if any) and prints nothing. */
export class RecordingLogger extends ConsoleLogger {
  readonly warnings: string[] = [];
  readonly errors: string[] = [];
  override warn(message: unknown): void {
    this.warnings.push(String(message));
  }
  override error(message: unknown, stack?: unknown): void {
    this.errors.push([message instanceof Error ? message.stack : String(message), stack].filter(Boolean).join('\n'));
  }
  override log(): void {}
  override debug(): void {}
  override verbose(): void {}
}
