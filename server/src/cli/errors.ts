/** A usage or lookup problem of an operator command: its message is printed as it is, and the CLI exits 1. */
export class CliError extends Error {}
