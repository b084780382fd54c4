/* Declarations only. */
#include "ikp.h"
int f(void);
int f(void) { return (int)IKP_OK; }
