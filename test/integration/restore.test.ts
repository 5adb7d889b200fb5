import { describeRestores } from '../support/restore-scenarios.js';

describeRestores(false);
