/* With IKP_NO_REPORT the diff and report API is not declared: this must not compile. */
#define IKP_IMPLEMENTATION
#include "ikp.h"
int main(void)
{
    ikp_diff *d = 0;
    return (int)ikp_diff_compute(0, 0, 0, &d, 0);
}
