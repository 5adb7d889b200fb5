// Import rules for lib/, checked by `npm run lint:deps` (part of `npm test`). Type-only imports count:
// a cycle of types is still a cycle for whoever reads the code.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'recipes-and-zookeeper-without-nest',
      comment: 'The recipes and the ZooKeeper session work with plain `new`: no Nest, no rxjs.',
      severity: 'error',
      from: { path: '^lib/(recipes|zookeeper|shared)/' },
      to: { path: '^node_modules/(@nestjs/|rxjs/)' },
    },
  ],
  options: {
    includeOnly: ['^lib/', '^node_modules/(@nestjs/[^/]+|rxjs)/'],
    // Not `exclude`: that would hide @nestjs and rxjs from the rules above.
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
