module semroute.test/contractclient

go 1.19
