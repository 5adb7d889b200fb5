import { InvalidOptionsError } from '../errors.js';

/** Wraps a method where it is declared, keeping its name and every reflect-metadata key. */
export function wrapMethod(
  decorator: string,
  key: string | symbol,
  descriptor: PropertyDescriptor,
  wrap: (original: (...args: unknown[]) => unknown) => (this: object, ...args: unknown[]) => unknown,
): (...args: unknown[]) => unknown {
  const original: unknown = descriptor.value;
  if (typeof original !== 'function') throw new InvalidOptionsError(decorator, `can only decorate methods; ${String(key)} is not one`);
  const wrapped = wrap(original as (...args: unknown[]) => unknown);
  for (const metadataKey of Reflect.getOwnMetadataKeys(original)) {
    Reflect.defineMetadata(metadataKey, Reflect.getOwnMetadata(metadataKey, original), wrapped);
  }
  Object.defineProperty(wrapped, 'name', { value: original.name });
  return wrapped;
}
