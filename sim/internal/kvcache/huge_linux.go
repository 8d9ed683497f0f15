package kvcache

import "syscall"

// hugePages says whether adviseHuge can ask for 2 MB pages.
const hugePages = true

// adviseHuge asks the kernel to back b with 2 MB pages where it can (madvise MADV_HUGEPAGE;
// transparent huge pages in "madvise" mode, the usual default, grant them only so). Pages
// already touched stay as they are; a kernel that refuses leaves b as it was.
func adviseHuge(b []byte) { _ = syscall.Madvise(b, 14) } // 14: MADV_HUGEPAGE
