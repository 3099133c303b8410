/* SPDX-License-Identifier: MIT */
/* The leak report at exit that PRIMALLOC_LEAKS=1 asks for (README,
 * primalloc(7)): the objects in use that nothing points to.
 *
 * When the process exits through exit() or a return from main, after the
 * program's own exit handlers, the thread that exits returns every cached
 * object to the folios, then marks what the roots reach: every writable
 * private mapping (data, bss, thread stacks and their thread-local
 * storage, the kernel's and the C library's anonymous memory), the exiting
 * thread's stack from its stack pointer on, and its registers; then the
 * objects those reach, transitively (gperftools' heap checker is the
 * model).  A word reaches an object when it points anywhere inside it.
 * primalloc's own memory is no root: its chunks, its guarded objects, and
 * the tables of the heap profile and of the guard pages, which hold
 * objects' addresses.  Objects that other threads still running hold in
 * their caches count as free.
 *
 * What is left is reported, one line a group: the objects the heap
 * profile sampled (PRIMALLOC_PROF=1) by allocation stack, with the
 * objects and bytes they stand for; every other one by size class (huge
 * and guarded objects as one class each).  Being conservative, the check
 * misses a leak whose address some word still holds by chance (a stale
 * stack slot of another thread, a freed object's old contents, an
 * integer), never reports an object a pointer reaches, and reads links
 * kept in another form (xored, compressed) as no pointer.  Threads still
 * running may change what it reads: it runs best when they are done.
 *
 * Promises: nothing is allocated; the check's own tables are mapped for
 * the check and unmapped after.  The report goes to stderr, through a
 * descriptor of its own when the program closed stderr. */
#ifndef PM_LEAK_CHECK_H
#define PM_LEAK_CHECK_H

/* Reads PRIMALLOC_LEAKS; called once, from the library's constructor. */
void pm_leak_check_init(void);

#endif
