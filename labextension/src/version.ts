/** The labextension version, as in package.json (a unit test checks it). */
export const VERSION = '0.1.0';
