import { describeRestores } from '../support/restore-scenarios.js';

// Runs alone (its own `vitest run` in npm test): every core is busy during the restores.
describeRestores(true);
