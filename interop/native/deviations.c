/*
 * What a C program gets from libibverbs on a device for the verbs where the native provider's
 * conformance run skips a test as a known rxe deviation (native/src/test/.../RxeDeviations.java):
 * the native provider passes these verbs through, so rdma4j and C must see the same answer.
 * Prints one "name: result" line per check. Usage: deviations <device>
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

static const char *err(int e) { return e == 0 ? "0 (success)" : strerror(e); }

int main(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "rxe0";
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    struct ibv_device *dev = NULL;
    for (int i = 0; list && i < n; i++)
        if (strcmp(ibv_get_device_name(list[i]), name) == 0)
            dev = list[i];
    if (!dev) { fprintf(stderr, "no device %s\n", name); return 1; }
    struct ibv_context *ctx = ibv_open_device(dev);
    struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
    struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
    if (!cq) { perror("open/pd/cq"); return 1; }

    void *buf = aligned_alloc(4096, 4096);
    struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    errno = 0;
    int rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
                          IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    printf("ibv_rereg_mr(CHANGE_ACCESS): returns %d, errno %s\n", rc, err(errno));

    struct ibv_qp_init_attr init = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
                                    .cap = {.max_send_wr = 8, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1}};
    struct ibv_qp *qp = ibv_create_qp(pd, &init);
    if (!qp) { perror("ibv_create_qp"); return 1; }
    printf("ibv_create_qp(max_send_wr 8, max_recv_wr 16): cap max_send_wr %u, max_recv_wr %u\n",
           init.cap.max_send_wr, init.cap.max_recv_wr);
    struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};
    rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
    printf("ibv_modify_qp(RESET -> ERR): returns %s\n", err(rc));

    /* receives past the reported max_recv_wr, in INIT (nothing consumes them) */
    struct ibv_qp_attr to_init = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = 0};
    rc = ibv_modify_qp(qp, &to_init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    int posted = 0;
    for (int i = 0; rc == 0 && i < 4 * 16; i++) {
        struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey};
        struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;
        if (ibv_post_recv(qp, &wr, &bad)) break;
        posted++;
    }
    printf("ibv_post_recv in INIT: %d accepted with max_recv_wr %u\n", posted, init.cap.max_recv_wr);

    uint16_t pkey;
    errno = 0;
    rc = ibv_query_pkey(ctx, 1, 1, &pkey);
    printf("ibv_query_pkey(port 1, index 1): returns %d, errno %s\n", rc, err(errno));

    ibv_destroy_qp(qp);
    ibv_dereg_mr(mr);
    ibv_destroy_cq(cq);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    ibv_free_device_list(list);
    return 0;
}
