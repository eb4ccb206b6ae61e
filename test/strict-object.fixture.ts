/** Prints strict-object-cases.ts's differences as JSON: run with --disallow-code-generation-from-strings by strict-object.test.ts. */
import { differences } from './strict-object-cases.js';

process.stdout.write(`${JSON.stringify(differences())}\n`);
