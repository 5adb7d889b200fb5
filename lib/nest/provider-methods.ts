import type { DiscoveryService, MetadataScanner } from '@nestjs/core';

type InstanceWrapper = ReturnType<DiscoveryService['getProviders']>[number];

/** One method of an application's provider or controller. */
export interface ProviderMethod {
  readonly wrapper: InstanceWrapper;
  readonly instance: object;
  readonly name: string;
  /** The function on the prototype: a decorator's wrapper, which carries every decorator's metadata. */
  readonly method: object;
}

/** Every method of the application's providers and controllers that has metadata under one of `keys`. */
export function* providerMethods(discovery: DiscoveryService, scanner: MetadataScanner, keys: readonly string[]): Generator<ProviderMethod> {
  for (const wrapper of [...discovery.getProviders(), ...discovery.getControllers()]) {
    const instance = wrapper.instance as unknown;
    if (typeof instance !== 'object' || instance === null) continue;
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown> | null;
    if (!prototype) continue;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const method = prototype[name] as object;
      if (keys.some((key) => Reflect.hasMetadata(key, method))) yield { wrapper, instance, name, method };
    }
  }
}
