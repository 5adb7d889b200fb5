// Import rules for lib/, checked by `npm run lint:deps` (part of `npm test`). Type-only imports count:
// a cycle of types is still a cycle for whoever reads the code.
//
// Each layer imports only the layers below it (and errors.ts):
//   nest -> service -> events -> context -> recipes -> queue -> zookeeper -> shared
// Extras (metrics, live-view, health, testing, cli) import the core; the core never imports them.
const LAYERS = ['nest', 'service', 'events', 'context', 'recipes', 'queue', 'zookeeper', 'shared'];
const EXTRAS = '^lib/(metrics|live-view|health|testing|cli)/';
const above = (layer) => LAYERS.slice(0, LAYERS.indexOf(layer));
const error = (name, from, to, comment) => ({ name, comment, severity: 'error', from, to });

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    error('no-circular', {}, { circular: true }),
    ...LAYERS.slice(1).map((layer) =>
      error(`${layer}-imports-only-below`, { path: `^lib/${layer}/` }, { path: `^lib/(${above(layer).join('|')})/` }, `lib/${layer}/ is below ${above(layer).join(', ')}`),
    ),
    error(
      'no-nest-below-the-service',
      { path: '^lib/(context|recipes|queue|zookeeper|shared)/|^lib/(errors|error-base)\\.ts$' },
      { path: '^node_modules/(@nestjs/|rxjs/)' },
      'The reentrancy rules, the recipes, the queue internals and the session work with plain `new`: no Nest, no rxjs.',
    ),
    error('core-never-imports-extras', { pathNot: EXTRAS }, { path: EXTRAS }, 'Extras import the core, never the reverse.'),
    error(
      'native-binding-behind-zookeeper',
      { pathNot: '^lib/(zookeeper|testing)/' },
      { path: '^lib/zookeeper/native-(client|handle)\\.ts$', dependencyTypesNot: ['type-only'] },
      'Only the session layer (and the testing kit) loads the native addon.',
    ),
    error('terminus-only-in-health', { pathNot: '^lib/health/' }, { path: '^node_modules/@nestjs/terminus/' }, '@nestjs/terminus is an optional peer.'),
    error(
      'opentelemetry-only-through-otel-api',
      { pathNot: '^lib/events/otel-api\\.ts$' },
      { path: '^node_modules/@opentelemetry/' },
      '@opentelemetry/api is an optional peer: lib/events/otel-api.ts loads it when installed, and nothing imports it.',
    ),
  ],
  options: {
    includeOnly: ['^lib/', '^node_modules/(@nestjs/[^/]+|@opentelemetry/[^/]+|rxjs)/'],
    // Not `exclude`: that would hide @nestjs and rxjs from the rules above.
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
