import * as v from 'valibot'

const name = (description: string) => v.pipe(v.string(), v.minLength(1), v.description(description))

export const snowflakeSinkConfig = v.pipe(
  v.strictObject({
    account: name('The account identifier (orgname-accountname, or the account locator)'),
    username: name('The user the sink logs in as'),
    password: v.optional(name('The password (password login)')),
    private_key: v.optional(name('A PEM private key of the user (key-pair login), instead of a password')),
    private_key_passphrase: v.optional(name('The passphrase of an encrypted private_key')),
    warehouse: name('The warehouse the COPY and the queries run on'),
    database: name('The database the tables are in'),
    schema: v.optional(name('The schema the tables are created in (default PUBLIC)'), 'PUBLIC'),
    role: v.optional(name('The role of the session (default: the user default role)')),
    stage: v.optional(
      name('A named stage (name or db.schema.name) the parts are put to; default: each table its own stage'),
    ),
    access_url: v.optional(
      v.pipe(
        v.string(),
        v.url(),
        v.description('The URL the driver talks to (for tests against a local server)'),
      ),
    ),
  }),
  v.check(
    (c) => (c.password === undefined) !== (c.private_key === undefined),
    'Snowflake: give exactly one of password and private_key',
  ),
)

export type SnowflakeSinkConfig = v.InferOutput<typeof snowflakeSinkConfig>
/** The config as written, before defaults. */
export type SnowflakeSinkOptions = v.InferInput<typeof snowflakeSinkConfig>
