#ifndef SWITCHBOARD_CSQLITE_SHIM_H
#define SWITCHBOARD_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast macro Swift cannot import: bind calls that copy their argument. */

static inline int switchboard_sqlite3_bind_text_copy(sqlite3_stmt *statement, int index, const char *text, int bytes) {
    return sqlite3_bind_text(statement, index, text, bytes, SQLITE_TRANSIENT);
}

static inline int switchboard_sqlite3_bind_blob_copy(sqlite3_stmt *statement, int index, const void *blob, int bytes) {
    return sqlite3_bind_blob(statement, index, blob, bytes, SQLITE_TRANSIENT);
}
#endif
